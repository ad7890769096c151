from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerSplitView,
)

from studio.api.common.auth import LoginView, LogoutView, MeView
from studio.core.views import HealthView, api_not_found
from studio.frontend import SPA_PATH_PATTERN, index

urlpatterns = [
    path("api/health", HealthView.as_view(), name="health"),
    path("api/auth/login", LoginView.as_view(), name="login"),
    path("api/auth/logout", LogoutView.as_view(), name="logout"),
    path("api/auth/me", MeView.as_view(), name="me"),
    path("api/", include("studio.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves its init script as a file, so the CSP needs no inline scripts.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="swagger-ui"),
    path(
        "api/redoc/",
        SpectacularRedocView.as_view(url_name="schema", template_name="studio/redoc.html"),
        name="redoc",
    ),
    re_path(r"^api/", api_not_found),  # after every API route: JSON, not the app's page
    path("admin/", admin.site.urls),
    re_path(SPA_PATH_PATTERN, index, name="index"),
]
