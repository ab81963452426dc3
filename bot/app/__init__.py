"""The application: what `bot run`, `bot once` and the other verbs run, without the CLI.

`runtime` opens what a verb needs (clients, journal, signer, executor, an embedded paper
world), `build` makes the strategies, the engine and the daemon's trading jobs of a
config, `record_jobs` the price recorder's jobs, `daemon` is the running daemon (jobs,
heartbeat, status, alerts, SIGHUP reload) and `daemon_start` its start-up and shut-down.
Nothing here prints: the daemon tells a `reporter.Reporter` what the person watching
should read, and a problem that must stop a verb is raised as `errors.SetupError`; the
command line (`bot.cli`) parses arguments, prints, and turns a `SetupError` into one
line and exit code 2.

This package's `__init__` imports nothing: the CLI imports `bot.app.errors` at every start.
"""
