"""The REST API's shared base: permissions, paging, parsers, errors, fields, schema, viewsets."""
