import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studio.settings")
django_application = get_asgi_application()

# Refuse oversized request bodies before Django's ASGI handler buffers them.
from studio.datasets.uploads import RequestBodyLimit  # noqa: E402  (needs settings loaded)

application = RequestBodyLimit(django_application)
