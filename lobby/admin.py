from django.contrib import admin, messages
from django.db.models import Q
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.safestring import mark_safe

from lobby.models import Answer, Player, Report, Room, VoidedQuestion
from lobby.services import review
from quiz.kinds import kind_of
from quiz.validation import OPTION_LETTERS
from review.admin import NONE, FlagRoomFilter
from review.admin_hooks import ReviewPanel, review_panel_register
from review.selectors import latest_label


@admin.register(Room)
class RoomAdmin(admin.ModelAdmin):
    list_display = ("code", "round", "phase", "question_index", "created_at")
    list_filter = ("phase",)
    search_fields = ("code",)
    readonly_fields = ("no_speed_bonus",)  # chosen before the game starts (lobby.services.room_set_no_speed_bonus)


@admin.register(Player)
class PlayerAdmin(admin.ModelAdmin):
    list_display = ("nickname", "room", "score", "removed")
    search_fields = ("nickname", "room__code")
    # Given by the host during a game, which also moves the question's deadline (lobby.services.player_time_set).
    readonly_fields = ("time_percent", "asks_more_time")


@admin.register(Report)
class ReportAdmin(admin.ModelAdmin):
    list_display = ("question", "room", "player", "text", "created_at")


@admin.register(VoidedQuestion)
class VoidedQuestionAdmin(admin.ModelAdmin):
    list_display = ("room", "question_index", "question", "reviewer", "created_at")
    readonly_fields = ("room", "question_index", "question", "removed_points", "reviewer", "created_at")

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


admin.site.register(Answer)


# -- the review queue's game half (registered into review's admin through its extension point) --------------------


class PlayedRoomFilter(FlagRoomFilter):
    """A room: questions flagged in it or played in it."""

    def lookups(self, request, model_admin):
        played = Room.objects.order_by("-created_at").values_list("code", flat=True)[:50]
        codes = sorted({code for code, _ in super().lookups(request, model_admin)} | set(played))
        return [(code, code) for code in codes]

    def room_q(self, code: str) -> Q:
        return super().room_q(code) | Q(entries__round__rooms__code=code)

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(pk__in=queryset.filter(self.room_q(self.value())).values("pk"))
        return queryset


def answers_block(model_admin, obj):
    plays = [play for play in review.question_plays(question=obj) if play.answers or play.closed]
    total = [sum(play.distribution[i] for play in plays) for i in range(len(obj.options))]
    context = {
        "rows": [
            {
                "room": play.room.code,
                "number": play.question_index + 1,
                "answers": play.answers,
                "chosen": " · ".join(
                    f"{OPTION_LETTERS[i]}{' ✓' if i in kind_of(obj).marked(obj) else ''}: {n}"
                    for i, n in enumerate(play.distribution)
                ),
                "state": "voided" if play.voided else ("closed" if play.closed else "open"),
            }
            for play in plays
        ],
        "total": " · ".join(f"{OPTION_LETTERS[i]}: {n}" for i, n in enumerate(total)) or NONE,
    }
    # The template escapes every value it prints.
    return mark_safe(render_to_string("admin/lobby/review_answers.html", context))


def void_urls(model_admin):
    def view(request, object_id):
        return void_view(model_admin, request, object_id)

    return [path("<path:object_id>/void/", model_admin.admin_site.admin_view(view), name="review_reviewitem_void")]


def void_link(model_admin, request, obj):
    return [("Void in a room", reverse("admin:review_reviewitem_void", args=[obj.pk]))]


def void_view(model_admin, request, object_id):
    model_admin.check_review(request)
    question = get_object_or_404(model_admin.get_queryset(request), pk=object_id)
    plays = [play for play in review.question_plays(question=question) if play.closed]
    if request.method == "POST":
        played = {(play.room.code, str(play.question_index)): play for play in plays}
        play = played.get((request.POST.get("room", ""), request.POST.get("question_index", "")))
        if play is None:
            model_admin.message_user(request, "That room has not played and closed this question.", messages.ERROR)
            return HttpResponseRedirect(request.path)
        room, index = play.room, play.question_index
        try:
            review.question_void(room_id=room.pk, question_index=index, reviewer=request.user)
        except review.VoidRefused as refused:
            model_admin.message_user(request, str(refused), messages.ERROR)
        else:
            model_admin.message_user(
                request, f"Question {index + 1} voided in room {room.code}; scores recomputed.", messages.SUCCESS
            )
        return HttpResponseRedirect(request.path)
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts,
        "title": f"Void question {question.pk} in a room",
        "question": question,
        "label": latest_label(question_id=question.pk),
        "plays": plays,
    }
    return TemplateResponse(request, "admin/review/reviewitem/void.html", context)


review_panel_register(
    ReviewPanel(
        name="lobby",
        answers=answers_block,
        room_filter=PlayedRoomFilter,
        urls=void_urls,
        tool_links=void_link,
    )
)
