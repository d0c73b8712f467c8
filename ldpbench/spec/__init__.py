"""Stage 2 of a run: a YAML spec -> a validated :class:`~ldpbench.spec.model.Spec` -> cells.

- :mod:`.load` reads YAML safely and remembers the line of every key and list item;
- :mod:`.validate` checks the spec against the format (docs/spec-format.md) and the installed
  plugins, every problem at its ``FILE:LINE`` (with :mod:`.capabilities`, what the spec asks of
  its plugins against what their tags declare; :mod:`.budgets`, the privacy-budget grammar;
  :mod:`.timeouts`, ``cell_timeout``);
- :mod:`.model` is the validated spec, plain picklable data;
- :mod:`.expand` turns the grid into cells with stable identities, and :mod:`.seeding` keys every
  random stream by such an identity, never by execution order.
"""
