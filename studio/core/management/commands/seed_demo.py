"""`seed_demo`: what a first start needs, made once and kept across restarts.

- an admin superuser (RLSTUDIO_ADMIN_USER / RLSTUDIO_ADMIN_PASSWORD, or a generated
  password printed once, when the user is created);
- the offline demo model and toy data, built by `python -m trainer make-demo-model`
  in a subprocess (the studio never imports torch); a missing or failing trainer CLI
  is a warning, not a failed start;
- the `grpo-tiny-arith` preset as a config file under var/demo/;
- a "Demo" project owned by the admin, holding the arith dataset (train split as
  version 1) and an `arith` reward function from the built-in template.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import IntegrityError, transaction

from studio.datasets.models import Dataset
from studio.datasets.normalise import ColumnMapping
from studio.datasets.versions import add_version
from studio.paths import REPO_ROOT, demo_asset_dirs, var_dir
from studio.projects.models import Membership, Project, Role
from studio.rewards.models import RewardFunction, RewardVersion
from trainer.config import PRESETS, ConfigError, load_config
from trainer.rewards import builtin_source

DEMO_PRESET = "grpo-tiny-arith"
DEMO_PROJECT_SLUG = "demo"
DEMO_BUILD_TIMEOUT_S = 600


class Command(BaseCommand):
    help = (
        "Create the admin user once, build the demo model and data if missing, "
        "write the demo preset."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--skip-demo-model", action="store_true", help="do not build the demo model and data"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        var = var_dir()
        self.ensure_admin()
        if not options["skip_demo_model"]:
            self.ensure_demo_assets(var)
        self.write_preset(var)
        self.ensure_demo_project(var / "demo-data" / "arith")

    def ensure_admin(self) -> None:
        username = os.environ.get("RLSTUDIO_ADMIN_USER") or "admin"
        user_model = get_user_model()
        if user_model.objects.filter(username=username).exists():
            return
        given = os.environ.get("RLSTUDIO_ADMIN_PASSWORD", "")
        password = given or secrets.token_urlsafe(12)
        try:
            with transaction.atomic():
                user_model.objects.create_superuser(username=username, email="", password=password)
        except IntegrityError:  # another seed created it a moment ago
            return
        if given:
            self.stdout.write(
                f"Created admin user {username!r} (password from RLSTUDIO_ADMIN_PASSWORD)."
            )
        else:
            self.stdout.write(
                self.style.WARNING(
                    f"Created admin user {username!r} with password {password!r}: shown only "
                    f"this once (reset: python -m django changepassword {username})."
                )
            )

    def ensure_demo_assets(self, var: Path) -> None:
        dirs = demo_asset_dirs(var)
        models = (dirs["--model-dir"], dirs["--reward-model-dir"], dirs["--tools-model-dir"])
        data_dir = dirs["--data-dir"]
        datasets = (data_dir / "arith", data_dir / "tools-arith")
        if all((m / "config.json").exists() for m in models) and all(d.is_dir() for d in datasets):
            return
        model_dir = dirs["--model-dir"]
        if importlib.util.find_spec("trainer.__main__") is None:
            self.stdout.write(
                self.style.WARNING(
                    "seed_demo: warning: the trainer CLI (python -m trainer) is not installed "
                    "yet, so the demo model was not built; build it later with "
                    "`rlstudio make-demo-model`."
                )
            )
            return
        logs = var / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        log_path = logs / "demo-build.log"
        command = [sys.executable, "-m", "trainer", "make-demo-model"]
        for option, folder in dirs.items():
            command += [option, str(folder)]
        started = time.monotonic()
        with log_path.open("ab") as log:
            try:
                result = subprocess.run(
                    command,
                    cwd=REPO_ROOT,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    timeout=DEMO_BUILD_TIMEOUT_S,
                    check=False,
                )
                code: int | str = result.returncode
            except subprocess.TimeoutExpired:
                code = f"timed out after {DEMO_BUILD_TIMEOUT_S} s"
        took = time.monotonic() - started
        if code == 0:
            self.stdout.write(f"Built the demo model and data in {took:.1f} s ({model_dir}).")
        else:
            self.stdout.write(
                self.style.WARNING(
                    f"seed_demo: warning: building the demo model failed (exit {code}); the "
                    f"studio runs without it. See {log_path}; "
                    "retry with `rlstudio make-demo-model`."
                )
            )

    def ensure_demo_project(self, data_dir: Path) -> None:
        """The demo project a new user lands in; created once, never duplicated. Its arith
        dataset holds the train and test files, the test rows labelled as held out: a run
        validates on them by default (studio.datasets.heldout)."""
        train_file = data_dir / "train.parquet"
        admin = get_user_model().objects.filter(is_superuser=True).order_by("id").first()
        if admin is None or Project.objects.filter(slug=DEMO_PROJECT_SLUG).exists():
            return
        with transaction.atomic():
            project = Project.objects.create(
                name="Demo",
                slug=DEMO_PROJECT_SLUG,
                created_by=admin,
                description="The offline demo: toy arithmetic, a tiny Llama model, GRPO.",
            )
            Membership.objects.create(project=project, user=admin, role=Role.OWNER)
            function = RewardFunction.objects.create(
                project=project,
                name="arith",
                created_by=admin,
                description="1.0 when the first integer of the response equals the answer.",
            )
            code = builtin_source("arith")
            RewardVersion.objects.create(
                function=function,
                number=1,
                code=code,
                code_hash=hashlib.sha256(code.encode()).hexdigest(),
                message="from the built-in template",
                author=admin,
            )
            dataset = Dataset.objects.create(
                project=project,
                name="arith",
                created_by=admin,
                description="Toy arithmetic prompts in verl format (train and test splits).",
            )
        if train_file.exists():
            both = data_dir / "train-and-test.parquet"
            parts = [
                pq.read_table(p) for p in (train_file, data_dir / "test.parquet") if p.exists()
            ]
            pq.write_table(pa.concat_tables(parts), both)
            add_version(
                dataset,
                both,
                both.name,
                ColumnMapping(),
                message="demo train and test splits",
                user=admin,
            )
        self.stdout.write(f"Created the demo project {DEMO_PROJECT_SLUG!r}.")

    def write_preset(self, var: Path) -> None:
        """var/demo/grpo-tiny-arith.yaml: the preset with this var dir's demo paths."""
        tree: dict[str, Any] = copy.deepcopy(PRESETS[DEMO_PRESET])
        data_dir = var / "demo-data" / "arith"
        tree.setdefault("model", {})["path"] = str(var / "demo-model")
        tree.setdefault("data", {}).update(
            train_files=[str(data_dir / "train.parquet")],
            val_files=[str(data_dir / "test.parquet")],
        )
        path = var / "demo" / f"{DEMO_PRESET}.yaml"
        text = (
            f"# The {DEMO_PRESET} preset on the offline demo model, written by seed_demo.\n"
            f"# Train it: rlstudio train {path}\n" + yaml.safe_dump(tree, sort_keys=False)
        )
        if path.exists() and path.read_text() == text:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        scratch = path.with_suffix(".tmp")
        scratch.write_text(text)
        try:
            load_config(scratch)
        except ConfigError as exc:
            scratch.unlink()
            self.stdout.write(self.style.WARNING(f"seed_demo: warning: preset not written: {exc}"))
            return
        scratch.replace(path)
