from rest_framework.pagination import CursorPagination, PageNumberPagination


class StandardPagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500  # bigger requests are clamped, never served unbounded


class SampleCursorPagination(CursorPagination):
    """Stable under inserts: live runs keep adding samples while a user pages."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500
    ordering = "-id"
