"""`fetch_hub_model`: a hub model downloaded into the studio's model cache
(studio.model_registry.hub does the work). A redelivered task finds the download
claimed and does nothing until the claim's lease runs out."""

from __future__ import annotations

from celery import Task

from studio.model_registry import hub
from workers.celery_app import app
from workers.delivery import over_delivery_cap

HARD_LIMIT_S = 3600  # a multi-GB model over a slow link


@app.task(bind=True, name=hub.TASK_NAME, ignore_result=True, time_limit=HARD_LIMIT_S)
def fetch_hub_model(self: Task, model_id: int) -> str:
    if over_delivery_cap(self):
        return "dropped"
    model = hub.take(model_id)
    if model is None:
        return "nothing to do"
    return hub.run(model)
