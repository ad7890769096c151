from tests.studio.conftest import (  # noqa: F401  the API tests' fixtures
    media,
    member,
    studio_var_dir,
    version,
    world,
)
