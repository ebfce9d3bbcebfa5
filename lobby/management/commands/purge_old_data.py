from django.core.management.base import BaseCommand, CommandError

from lobby.services.retention import old_data_purge


class Command(BaseCommand):
    help = (
        "Delete games (players' nicknames, answers, reports) and browser sessions older than RETENTION_DAYS. "
        "Run daily by Celery beat; safe to run at any time."
    )

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, default=None, help="Keep this many days instead of RETENTION_DAYS.")
        parser.add_argument("--dry-run", action="store_true", help="Count what would go; delete nothing.")

    def handle(self, *args, days: int | None = None, dry_run: bool = False, **options):
        try:
            purged = old_data_purge(days=days, dry_run=dry_run)
        except ValueError as error:
            raise CommandError(str(error)) from error
        verb = "Would delete" if dry_run else "Deleted"
        self.stdout.write(
            f"{verb} {purged.rooms} rooms ({purged.players} players, {purged.answers} answers, "
            f"{purged.reports} reports) with no activity since {purged.cutoff:%Y-%m-%d %H:%M} UTC, "
            f"and {purged.sessions} sessions; blanked the client network of {purged.networks} generation jobs; "
            f"{verb.lower()} {purged.pictures} pictures no round shows."
        )
