"""An automated DCA / limit-order trading bot for Aptos, trading through the Panora API."""

__version__ = "0.1.0"
__all__ = ["__version__"]
