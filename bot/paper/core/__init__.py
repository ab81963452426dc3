"""The paper world's core: pure Python, no HTTP, one injected clock (see docs/paper-world.md)."""
