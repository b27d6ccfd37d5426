"""The exceptions ragsift raises. Each carries a message meant for a user."""


class RagsiftError(Exception):
    """Base class: every error ragsift raises on purpose derives from it."""


class ConfigError(RagsiftError):
    """A setting is missing, unknown or conflicts with the knowledge base."""


class FilterError(RagsiftError):
    """A metadata filter is malformed or names an unknown field."""


class QueryError(RagsiftError):
    """A query cannot be run as given (empty, too long, bad parameters)."""


class StoreError(RagsiftError):
    """The store is unreadable, locked or inconsistent."""


class ModelError(RagsiftError):
    """A model could not be found or loaded."""


class RetrievalError(RagsiftError):
    """Every channel of a query failed (the store is damaged or unreachable, every deadline
    passed): nothing was searched, which is not the same as nothing found."""
