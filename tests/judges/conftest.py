"""Fixtures of the judge tests: `judge_run` drives `vcost judge run` against a local server."""

from _judge_cli import judge_run

__all__ = ["judge_run"]
