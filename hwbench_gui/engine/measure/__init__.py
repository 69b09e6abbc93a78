"""Measuring tools every benchmark uses: timers and units, sample statistics, generated images,
file-system facts and the JPEG decode pool."""
