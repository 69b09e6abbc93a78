"""Results library, comparison between machines, charts and reports (HTML, PDF, CSV).

Plain Python (matplotlib, Jinja2, scipy), no Qt: the Reports tab and ``hwbench compare`` /
``hwbench report`` both sit on top of this package.
"""
