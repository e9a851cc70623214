"""SQL engines: one module each; this table is the only place that lists them."""

from __future__ import annotations

from rulegen.targets.sql.dialects.base import Dialect
from rulegen.targets.sql.dialects.clickhouse import ClickHouse
from rulegen.targets.sql.dialects.duckdb import DuckDB
from rulegen.targets.sql.dialects.mariadb import MariaDB
from rulegen.targets.sql.dialects.postgres import PostgreSQL
from rulegen.targets.sql.dialects.spark import Spark
from rulegen.targets.sql.dialects.sqlite import SQLite

DIALECTS: dict[str, Dialect] = {d.name: d for d in (SQLite(), DuckDB(), PostgreSQL(), MariaDB(), ClickHouse(), Spark())}

__all__ = ["DIALECTS", "Dialect"]
