"""The Slurm backend: ``client`` runs Slurm's tools, ``jobs`` reads their records, ``backend`` acts."""
