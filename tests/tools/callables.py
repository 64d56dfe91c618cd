"""Python tools the tests allow-list in COGNIZES_TOOL_CALLABLES."""

from __future__ import annotations


def convert_currency(amount: float, currency: str) -> dict:
    """Convert euros to another currency."""
    rates = {"USD": 1.25, "GBP": 0.5}
    return {"amount": amount * rates[currency], "currency": currency}


def wire_money(amount: float, to: str) -> dict:
    """Send money to someone."""
    return {"sent": amount, "to": to}


def not_allowed(text: str) -> dict:
    """Never allow-listed: a row naming it must be refused."""
    return {"text": text}
