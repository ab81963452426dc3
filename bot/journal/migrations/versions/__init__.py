"""One module per journal schema revision, oldest first."""
