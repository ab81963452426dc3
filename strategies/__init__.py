"""Built-in strategy plugins (see docs/strategies.md once the plugin API lands)."""
