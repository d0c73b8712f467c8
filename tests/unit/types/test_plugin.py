"""What every plugin class shares (ldpbench/types/plugin.py): declared defaults filled in, the
values stored verbatim and given back, and which optional methods a class implements."""

from __future__ import annotations

from ldpbench.params import Param
from ldpbench.types import Plugin, implements


class Base(Plugin):
    name = "base-kind"

    def optional(self):
        raise NotImplementedError


class Shrink(Base):
    name = "shrink"
    params = (Param("factor", float, 0.5, "the factor"), Param("label", str, "x", "a label"))


class Overrides(Shrink):
    def optional(self):
        return 1


def test_declared_defaults_fill_in_what_is_not_given():
    plugin = Shrink(label="y")
    assert (plugin.factor, plugin.label) == (0.5, "y")
    assert plugin.get_params() == {"factor": 0.5, "label": "y"}


def test_get_params_is_a_copy_and_repr_shows_the_values():
    plugin = Shrink(factor=2.0)
    plugin.get_params()["factor"] = 3.0
    assert plugin.get_params()["factor"] == 2.0
    assert repr(plugin) == "Shrink(factor=2.0, label='x')"


def test_implements_says_which_class_of_the_mro_defines_a_method():
    assert not implements(Shrink, Base, "optional")
    assert implements(Overrides, Base, "optional")
    assert implements(type("Deeper", (Overrides,), {}), Base, "optional")


def test_a_plugin_kind_has_no_contract_problems_of_its_own():
    assert Plugin.contract_problems(Shrink) == []
