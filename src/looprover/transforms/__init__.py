"""Program -> Program transformations (`transforms/base.py`), by the name `looprover transform --technique`
uses. Loaded lazily, like the engines."""
from __future__ import annotations

import importlib

from looprover.transforms.base import Transform

TRANSFORMS: dict[str, str] = {
    "none": "looprover.transforms.base:Identity",
    "labmc": "looprover.transforms.labmc:LABMCTransform",
    "accelerate": "looprover.transforms.accelerate:AccelerateTransform",
    "summarize": "looprover.transforms.summarize:SummarizeTransform",
    "cells": "looprover.transforms.cells:CellAbstraction",
    "strings": "looprover.transforms.strings:StringTerminators",
    "slice": "looprover.transforms.slicing:Slice",
}


def get_transform(name: str) -> Transform:
    path = TRANSFORMS.get(name)
    if path is None:
        raise KeyError(f"unknown technique {name!r}; known: {', '.join(sorted(TRANSFORMS))}")
    module, _, cls = path.partition(":")
    return getattr(importlib.import_module(module), cls)()
