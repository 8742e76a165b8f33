"""The e2e fixtures (`cli`, `spawn`) live in tests/conftest.py, shared by every folder."""
