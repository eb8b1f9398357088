"""What the Django admin's pages (``/admin/`` on the admin port) share: the site's titles, a
form that saves through the control plane and shows its refusals at the field, and the
``ModelAdmin`` base that lets the control plane own the transaction.

How a save works: the form validates its fields (JSON syntax, then the config schema of the
admin API), then :meth:`ControlPlaneForm.commit` hands the definition to the control plane
(:mod:`mocks.control`, :mod:`tables.services`), which writes it in one transaction and pushes
the new config to the engine before committing (``commit_change``): the next data-plane
request sees it. Anything the control plane refuses (a schema problem, a duplicate id, a
route collision, a config the engine cannot compile) comes back as a form error on the field
it names, with nothing written. The admin view itself opens no transaction around the save,
so the control plane's transaction is the one that commits.

Login: the Django admin has its own user accounts; ``mockd start`` creates the superuser
``admin`` with a one-time password on the first start of a data directory (``mockd admin
password`` prints it, ``--reset`` sets a new one). The admin API key does not log in here, and
CSRF protection stays on for every form.

Source: issue 30 items 3 and 4; ARCHITECTURE seam 6 (writes only through the control plane).
"""
from __future__ import annotations

import json
from typing import Any, Callable

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.options import csrf_protect_m
from django.core.exceptions import NON_FIELD_ERRORS
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect

from mocks.control.errors import AdminError, ConfigValidationError

#: Titles of the admin site; "View site" leads to the dashboard at ``/``.
admin.site.site_header = "mockd administration"
admin.site.site_title = "mockd admin"
admin.site.index_title = "Definitions (saved through the control plane)"
admin.site.site_url = "/"

#: Largest JSON text a config field accepts (characters); the admin API's body limit is 10 MiB.
MAX_CONFIG_TEXT = 1_000_000


class PrettyJSONField(forms.JSONField):
    """A JSON object edited as indented text in a monospace text area; rejects texts above
    :data:`MAX_CONFIG_TEXT` characters and values that are not objects."""

    default_error_messages = {"invalid": "Enter valid JSON: %(reason)s"}

    def __init__(self, **kwargs: Any):
        kwargs.setdefault("widget", forms.Textarea(attrs={
            "rows": 18, "cols": 100, "class": "vLargeTextField mockd-json",
            "spellcheck": "false"}))
        super().__init__(**kwargs)

    def prepare_value(self, value: Any) -> str:
        """The value as indented JSON (a text that did not parse is shown as typed)."""
        if isinstance(value, forms.fields.InvalidJSONInput):
            return value
        return json.dumps(value, ensure_ascii=False, indent=2, cls=self.encoder)

    def to_python(self, value: Any) -> Any:
        """Parse the text; a syntax error names the line and column."""
        if self.disabled or value in self.empty_values:
            return super().to_python(value)
        if isinstance(value, str) and len(value) > MAX_CONFIG_TEXT:
            raise forms.ValidationError(f"at most {MAX_CONFIG_TEXT:,} characters",
                                        code="too_long")
        if isinstance(value, str):
            try:
                json.loads(value, cls=self.decoder)
            except json.JSONDecodeError as error:
                raise forms.ValidationError(
                    self.error_messages["invalid"], code="invalid",
                    params={"reason": f"{error.msg} (line {error.lineno}, column "
                                      f"{error.colno})"}) from None
        return super().to_python(value)

    def validate(self, value: Any) -> None:
        """A config must be a JSON object."""
        super().validate(value)
        if value not in self.empty_values and not isinstance(value, dict):
            raise forms.ValidationError("must be a JSON object ({...})", code="not_object")


class ControlPlaneForm(forms.ModelForm):
    """A model form whose save is a control-plane call.

    Subclasses implement :meth:`commit` (returns the saved row's primary key) and may map
    issue paths to their fields with :meth:`field_of`. :meth:`commit` runs once every field is
    valid, as the last step of validation, so a refusal becomes a form error and the admin
    shows the form again with nothing saved. ``saved_pk`` holds the key after a save.
    """

    saved_pk: Any = None

    def commit(self) -> Any:
        """Save the cleaned data through the control plane; return the primary key. Raises
        :class:`AdminError` when the control plane refuses."""
        raise NotImplementedError

    def field_of(self, path: str) -> tuple[str | None, str]:
        """The form field an issue path belongs to and the path shown before the reason
        (``(None, path)``: a form-wide error)."""
        return None, path

    def field_of_error(self, error: AdminError) -> str | None:
        """The field an :class:`AdminError` without issues belongs to (None: form-wide)."""
        return None

    def _post_clean(self) -> None:
        super()._post_clean()
        if self.errors:
            return
        try:
            self.saved_pk = self.commit()
        except ConfigValidationError as error:
            for issue in error.issues:
                field, shown = self.field_of(issue.path)
                self._add_error_once(field, f"{shown}: {issue.reason}" if shown
                                     else issue.reason)
        except AdminError as error:
            self._add_error_once(self.field_of_error(error), error.message)

    def _add_error_once(self, field: str | None, message: str) -> None:
        if field is not None and field not in self.fields:
            field = None
        known = self.errors.get(field or NON_FIELD_ERRORS, [])
        if message not in known:
            self.add_error(field, message)


class ControlPlaneAdmin(admin.ModelAdmin):
    """A ``ModelAdmin`` whose forms save through the control plane (:class:`ControlPlaneForm`)
    and whose deletes call :meth:`delete_definitions`.

    The add/change and delete views run without the admin's own transaction: the control
    plane opens one per change and pushes the engine before it commits, so no outer
    transaction can roll the database back behind the engine's back.
    """

    @csrf_protect_m
    def changeform_view(self, request: HttpRequest, object_id: str | None = None,
                        form_url: str = "", extra_context: dict | None = None) -> HttpResponse:
        """The add/change page; the save is the form's control-plane call."""
        return self._changeform_view(request, object_id, form_url, extra_context)

    @csrf_protect_m
    def delete_view(self, request: HttpRequest, object_id: str,
                    extra_context: dict | None = None) -> HttpResponse:
        """The delete page; the delete is one control-plane change. A refusal is shown as a
        message on the object's page, with nothing deleted."""
        try:
            return self._delete_view(request, object_id, extra_context)
        except AdminError as error:
            self.message_user(request, f"Not deleted: {error.message}", messages.ERROR)
            return HttpResponseRedirect(request.path.rsplit("/delete/", 1)[0] + "/change/")

    def save_model(self, request: HttpRequest, obj: Any, form: ControlPlaneForm,
                   change: bool) -> None:
        """Nothing left to write: the form saved through the control plane; the row's key is
        taken from that save (used by the admin's redirect and history)."""
        obj.pk = form.saved_pk

    def save_related(self, request: HttpRequest, form: Any, formsets: Any,
                     change: bool) -> None:
        """No related rows are edited here."""

    def delete_definitions(self, objs: list[Any]) -> None:
        """Delete ``objs`` through the control plane (one change where the service allows)."""
        raise NotImplementedError

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        """Delete one row through :meth:`delete_definitions`."""
        self.delete_definitions([obj])

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        """Delete the selected rows through :meth:`delete_definitions`; a refusal is shown as
        an error message, with nothing deleted."""
        try:
            self.delete_definitions(list(queryset))
        except AdminError as error:
            self.message_user(request, f"Not deleted: {error.message}", messages.ERROR)


def run_change(action: Callable[[], Any], request: HttpRequest, admin_page: admin.ModelAdmin,
               done: str) -> None:
    """Run a control-plane ``action`` of a list action; tell the user ``done`` or why the
    control plane refused (no traceback page)."""
    try:
        action()
    except AdminError as error:
        admin_page.message_user(request, error.message, messages.ERROR)
        return
    admin_page.message_user(request, done, messages.SUCCESS)
