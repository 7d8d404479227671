"""The process the audit runs in: start-up, limits, helpers and stops (issue 11, issue 14).

Nothing here reads a log or judges one.  These modules keep the command safe and quick
on a CI runner: what loads at start-up and the cyclic collector (:mod:`.startup`,
:mod:`.malloctune`), the address-space and memory limits (:mod:`.addrspace`,
:mod:`.isolated`), the cores Polars may use (:mod:`.cores`), helper processes that never
outlive the audit (:mod:`.childproc`, :mod:`.procs`, :mod:`.pooled`, :mod:`.stuck`),
waits a SIGINT or SIGTERM can end and the one line a stopped run writes (:mod:`.waits`,
:mod:`.stopline`, :mod:`.envtime`), and standard output and error as files
(:mod:`.streams`).  The package imports none of them: each command loads what it needs.
"""
