"""Where runs are kept: the journal (`journal`, `journal_pg`) and the shared tenant ledger (`ledger`,
`ledger_pg`), on SQLite or PostgreSQL, chosen by one database URL (`db`). A new backend is a pair of modules here.
"""
