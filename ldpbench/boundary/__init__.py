"""Where the harness meets plugin code, at every stage that runs it.

Plugins are trusted code (docs/trust.md), but not trusted to be right: whatever they are handed is
read-only and whatever they return is checked (:mod:`.values`), their time, exits and interrupts
are kept inside the cell (:mod:`.guard`), and what they raise is described by what it was and where
in plugin code it happened (:mod:`.failures`). Validation, the engine, the audit and the kit all
call plugins through here.
"""
