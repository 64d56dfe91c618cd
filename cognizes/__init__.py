"""Cognizes: a self-hosted memory and session engine for ADK agents."""

from cognizes.celery import app as celery_app

__all__ = ["celery_app"]
