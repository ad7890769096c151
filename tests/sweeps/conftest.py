from tests.studio.conftest import (  # noqa: F401  the API tests' fixtures
    media,
    member,
    studio_var_dir,
    version,
    world,
)
from tests.studio.test_run_deletion import commit, spool  # noqa: F401  deletion's fixtures
from tests.sweeps.test_sweeps_api import versions  # noqa: F401  two reward versions
