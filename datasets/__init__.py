"""Small real datasets shipped with ldpbench as item-count histograms.

Installed as the package ``ldpbench_data`` so that dataset plugins find the files with
``importlib.resources`` whether ldpbench is installed editable or from a wheel. Each dataset has a
provenance note (``<name>.md``) next to its histogram.
"""
