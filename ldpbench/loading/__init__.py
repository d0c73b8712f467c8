"""Stage 1 of a run: find, load and register every plugin.

:func:`~ldpbench.loading.manager.build_plugins` discovers the ``ldpbench`` entry points (built-ins
and third parties through the same door), ``--plugins-dir`` folders and objects given directly;
each registration hook gets a :mod:`registry <.registry>` that validates a class the moment it is
registered; :mod:`.identity` says what code stands behind a plugin's numbers.
"""
