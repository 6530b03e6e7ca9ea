"""Viewsets of the REST API: thin, they pick a queryset and call selectors and services."""
