"""The results folder's JSON (ldpbench/results/jsoncodec.py): strict, and infinity kept."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import polars as pl
import pytest

from ldpbench.engine.rows import COLUMNS, SCHEMA, empty_frame
from ldpbench.errors import ExitCode, LdpbenchError
from ldpbench.results.jsoncodec import dumps_json
from ldpbench.results.status import cell_status
from ldpbench.results.store import ResultsStore, ResultsWarning
from ldpbench.results.versioning import SCHEMA_VERSION, ResultsSchemaError
from support import strict_loads


def test_dumps_json_is_strict_and_keeps_infinity():
    text = dumps_json({"a": math.nan, "b": [math.inf, -math.inf], "c": np.float32(0.5), "d": np.int64(3)})
    assert strict_loads(text) == {"a": None, "b": [math.inf, -math.inf], "c": 0.5, "d": 3}
    assert "1e999" in text and "NaN" not in text and "Infinity" not in text


def test_a_row_with_a_top_level_nan_is_written_as_any_other_object():
    """A result row's NaN (failed value, NaN theory) skips the first pass: same text as before."""
    row = {"value": math.nan, "theory": 0.25, "n": np.int64(7), "info": {"x": [math.inf, np.float32(0.5)]}, "e": None}
    assert dumps_json(row) == '{"value": null, "theory": 0.25, "n": 7, "info": {"x": [1e999, 0.5]}, "e": null}'
    assert json.loads(dumps_json(row))["info"]["x"][0] == math.inf


@pytest.mark.parametrize("label", ["\x00ldpbench+inf\x00", "\x00ldpbench-inf\x00", "a\x00ldpbench+inf\x00b"])
def test_a_string_equal_to_the_infinity_marker_round_trips(label):
    """Reproduction (issue 28): a `users:` group label equal to the writer's internal infinity
    marker was written as 1e999, so every later run, leaderboard and compare of the folder
    exited 2. The marker of each write is one no string of the data contains."""
    row = {"users": label, label: [label], "epsilon": math.inf, "low": -math.inf}
    back = json.loads(dumps_json(row))
    assert back == {"users": label, label: [label], "epsilon": math.inf, "low": -math.inf}
