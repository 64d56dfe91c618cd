"""Fixtures the knowledge tests share with the Vertex surface's."""

from tests.vertex.conftest import server as server  # a Cognizes server on loopback with the app's engine and a key
