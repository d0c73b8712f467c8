"""Prior families for Calibrate and Power; :class:`PriorFamilyBase` is the base to subclass."""

from ._base import PriorFamilyBase

__all__ = ["PriorFamilyBase"]
