"""All REST routes under /api/."""

from rest_framework.routers import DefaultRouter

from studio.api.projects import ApiTokenViewSet, AuditEventViewSet, ProjectViewSet

router = DefaultRouter(trailing_slash=True)
router.register("projects", ProjectViewSet, basename="project")
router.register("tokens", ApiTokenViewSet, basename="token")
router.register("audit", AuditEventViewSet, basename="audit")

urlpatterns = router.urls
