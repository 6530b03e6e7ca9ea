"""Serializers of the REST API: thin shapes over the models; writes go to the services."""
