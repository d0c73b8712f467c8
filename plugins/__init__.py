"""ldpbench's built-in plugins, installed as ``ldpbench_plugins`` and registered through the ``ldpbench`` entry points like any third-party plugin."""
