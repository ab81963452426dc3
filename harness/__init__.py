"""Rigs shared by the tests and the benchmarks; not part of the bot, not in the wheel.

Both `tests/` and `bench/` import from here, never from each other. Nothing here is
pytest-specific (fixtures stay in `tests/`):

* `whole_bot`: the whole bot as real processes in one folder (`bot paper serve`, `bot run`
  through `bot_child`, which only adds stamps on stderr);
* `chaos`, `soak`: the chaos-kill and fault-soak runs on that rig, judged by `audit`
  (the journal against the paper world: every intent applied exactly once);
* `paper_signing`: deterministic keys and a bare signer for driving the paper node;
* `paper_chain`: the bot's signer against the paper node in process, on scripted time
  (the chain tests and `bench/signer.py`);
* `paper_chain`: the bot's signer against the paper node in process, on a scripted clock
  (the chain tests and `bench/signer.py`);
* `five_strategies`: the five built-in strategies in one config, as the docs show them.
"""
