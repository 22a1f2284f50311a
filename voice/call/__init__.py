"""The call core, sans-I/O: one call's state machine (`core.CallCore`) and what it keeps, decides and says.

Events go in (`events`), commands come out; no sockets, threads, clocks or models here. Turn taking
(`turns`), the reply being played and heard (`reply`, `playout`), the approval dialog (`approval`, `answers`,
`approval_dialog`) and the truth about writes (`write_truth`). Drivers that carry the commands out are in
`voice.runtime`.
"""
