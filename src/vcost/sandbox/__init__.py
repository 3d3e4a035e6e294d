"""Isolated execution of untrusted code: model answers and participants' code.

Ground truth in vcost comes from hidden tests run here. Only the code and the test *inputs*
enter the sandbox; only plain JSON comes out, over a channel the code cannot reach; the
comparison with the expected values happens outside (:mod:`vcost.grading`).

::

    sandbox = Sandbox()                      # bubblewrap if usable, else WEAK with a warning
    results = sandbox.call(code, "merge_bookings", [[[[1, 3], [2, 6]]], [[]]])
    results[0].status, results[0].value      # ('ok', [[1, 6]])
    script = sandbox.run_script(code, files={"data.csv": data})
    sandbox.close()                          # end the warm sandboxes (also done at exit)

A sandbox is warm: it is started once and grades answer after answer (one per concurrent
caller); after each answer everything the answer left is killed, removed or checked, and a
sandbox that cannot be made clean is discarded.

The threat model, what is isolated and how, the limits and the fallbacks: docs/sandbox.md.
"""

from vcost.sandbox._errors import SandboxError, WeakIsolationWarning
from vcost.sandbox._limits import Limits
from vcost.sandbox._plan import Isolation
from vcost.sandbox._sandbox import CallResult, Sandbox, ScriptResult, bubblewrap_problem

__all__ = [
    "CallResult",
    "Isolation",
    "Limits",
    "Sandbox",
    "SandboxError",
    "ScriptResult",
    "WeakIsolationWarning",
    "bubblewrap_problem",
]
