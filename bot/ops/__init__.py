"""Operating the daemon: systemd notification, status file, heartbeat, doctor checks, alerts.

`ops` may import `api`, `chain`, `journal`, `aptos`, `money`, `config`, `logging`, `clock`
and `engine` (for its stats and events); only `cli` imports `ops`.
"""
