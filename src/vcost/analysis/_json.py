"""JSON-ready numbers: the one conversion every analysis result's ``to_dict`` uses."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd

from vcost.indicators import Estimate

__all__ = ["to_jsonable"]


def to_jsonable(value: Any) -> Any:
    """Frames, dataclasses, numpy scalars and NaN (as null) made JSON-ready."""
    if isinstance(value, pd.DataFrame):
        return [to_jsonable(r) for r in value.to_dict(orient="records")]
    if isinstance(value, Estimate):
        return {"value": to_jsonable(value.value), "lower": to_jsonable(value.lower),
                "upper": to_jsonable(value.upper), "n": value.n}  # fmt: skip
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, pd.Timestamp | datetime):
        return value.isoformat()
    return value
