"""Privacy accounting beyond one plugin's local ε: what a deployment around the reports buys.

A library of the engine, the results folder and the audit, depending on nothing else of ldpbench:

- :mod:`.shuffle`: the central (ε, δ) that a trusted shuffler gives to n reports of an ε0-LDP
  randomizer (Feldman, McMillan & Talwar, FOCS 2021; Wang et al., VLDB 2024). docs/shuffling.md
  states the bounds, their assumptions and the published values they are checked against.
"""
