"""The API tests' world (a project with an owner, a member and a viewer, and an outsider
with a project of their own) for the security tests."""

from tests.studio.conftest import studio_var_dir, world  # noqa: F401
