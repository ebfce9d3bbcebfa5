from django.contrib import admin

from lobby.models import Answer, Player, Report, Room


@admin.register(Room)
class RoomAdmin(admin.ModelAdmin):
    list_display = ("code", "round", "phase", "question_index", "created_at")
    list_filter = ("phase",)
    search_fields = ("code",)


@admin.register(Player)
class PlayerAdmin(admin.ModelAdmin):
    list_display = ("nickname", "room", "score", "removed")
    search_fields = ("nickname", "room__code")


@admin.register(Report)
class ReportAdmin(admin.ModelAdmin):
    list_display = ("question", "room", "player", "text", "created_at")


admin.site.register(Answer)
