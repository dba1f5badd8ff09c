"""What only `bench` needs is an optional extra: without it, a bench run still runs and says why it draws no
plots, and `--cluster` is an input error naming the extra."""
from __future__ import annotations

import sys

import pytest

from looprover.errors import InputError


def test_without_matplotlib_plots_are_skipped_with_the_reason(monkeypatch):
    from looprover.bench.plots import unavailable
    assert unavailable() is None                     # installed here (setup.sh installs the bench extra)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert "matplotlib" in unavailable() and "[bench]" in unavailable()


def test_without_dask_the_cluster_option_names_the_extra(monkeypatch):
    from looprover.bench.cluster import run_on_cluster
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(InputError, match=r"distributed.*\[bench\]"):
        run_on_cluster("tcp://127.0.0.1:1", [], 1.0, 1.0)
