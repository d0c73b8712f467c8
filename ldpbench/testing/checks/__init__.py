"""The plugin conformance kit: named checks every oracle and post-processor must pass.

Shaped like scikit-learn's ``check_estimator``: :func:`oracle_checks` / :func:`postprocessor_checks`
yield ``(check_name, check)`` pairs (``check()`` raises ``AssertionError`` with a readable message);
:func:`check_oracle` / :func:`check_postprocessor` run them all; :func:`parametrize_with_checks`
turns a list of plugins into a ``pytest.mark.parametrize`` with readable ids. A plugin that knowingly
fails a check lists it in ``expected_failed_checks={"check_name": "reason"}`` instead of skipping
silently.

What the oracle checks establish (docs/algorithms.md §8.1, §8.2, at sizes that run in seconds):

- the constants (0 <= q* < p* <= 1), the generic estimate ``(c/n - q*)/(p* - q*)`` and the exact
  variance formula (V-exact);
- the exact epsilon-LDP of :meth:`~ldpbench.types.Oracle.output_table` (every likelihood ratio at
  most ``e^eps (1 + 1e-12)``, the bound attained unless the tags say ``attains_epsilon = False``,
  each conditional law summing to 1) and p*, q* read off the table;
- for an oracle whose tags declare ``real_valued_counts`` (SHE), its sums checked as finite floats
  and its estimate carrying no p*/q*; its variance is tested by simulation only;
- that ``perturb`` follows the table (Pearson chi-square of the reports' table rows when the oracle
  declares ``output_rows``, else binomial tests of its support counts) and, for finite-output
  oracles, that ``channel()`` is the law of the reports;
- both simulation paths against the **exact law** of the support counts (and of the report
  histogram) for a tiny population, enumerated from the table;
- unbiasedness (Z-test) and the variance formula (variance ratio and per-value chi-square bounds)
  by repeated simulation on both paths;
- hygiene: no global random state touched, same seed => same output, empty and one-user chunks,
  the :class:`~ldpbench.types.Estimate` fields filled;
- that the oracle's declared :meth:`~ldpbench.types.Oracle.tags` are backed by what it implements.

Every simulation goes through the engine's own :func:`ldpbench.engine.simulate.simulate`, and which
optional parts are exercised is read from the oracle's tags only, as the engine does: a check that
needs a capability the oracle does not declare (an aggregate path, a finite output, an output
table) is *not applicable* (:class:`CheckSkipped`, reported as such), never silently passed, and
the spec validator refuses specs that would need it.

The kit is split along its ideas: :mod:`.machinery` (the plugin under test, "not applicable",
random streams), :mod:`.oracle`, :mod:`.postprocessor`, :mod:`.metric` and :mod:`.dataset` (the
checks of each kind: ``CHECKS``, their configuration ``CONFIG`` and ``applies``, named by the kind's
declaration in :data:`ldpbench.types.kinds.KINDS`) and :mod:`.runner` (the entry points). The
public names are those of :mod:`ldpbench.testing`.
"""
