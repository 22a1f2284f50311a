"""Errors raised by model adapters. The loop maps them onto terminal outcomes."""

from __future__ import annotations


class ModelError(Exception):
    """A model call failed. `retryable` says whether the same request may succeed later."""

    retryable = False


class ModelAuthError(ModelError):
    """The provider rejected the credentials (HTTP 401/403). Retrying unchanged cannot help."""


class ModelUnavailable(ModelError):
    """The provider kept failing (429/5xx/timeouts) after the configured retries."""

    retryable = True


class MalformedStream(ModelError):
    """The provider's stream broke off or carried something that is not the protocol."""

    retryable = True


class ModelRequestError(ModelError):
    """The provider refused the request itself (HTTP 400/404/422): fix the request, not the network."""
