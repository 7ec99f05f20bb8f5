"""A Django application in one file for test_apps.py, as WSGI
(`application`) and ASGI (`asgi_app`), routed by the last segment of the
path: the page names the framework and the interface, /echo a form POST."""
import hashlib
import os

from django.conf import settings

settings.configure(
    DEBUG=False,
    SECRET_KEY="apps-test-only",
    ALLOWED_HOSTS=["*"],
    ROOT_URLCONF=__name__,
    MIDDLEWARE=[],
    INSTALLED_APPS=[],
    USE_TZ=True,
)

from django.core.asgi import get_asgi_application  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.http import HttpResponse, JsonResponse  # noqa: E402
from django.urls import re_path  # noqa: E402
from django.views.decorators.csrf import csrf_exempt  # noqa: E402


@csrf_exempt
def echo(request):
    body = request.body
    return HttpResponse("%d %s %s" % (len(body), hashlib.sha256(body).hexdigest(),
                                      request.POST.get("a", "")))


def headers(request):
    return JsonResponse({k[5:].lower().replace("_", "-"): v for k, v in request.META.items()
                         if k.startswith("HTTP_")})


def home(request):
    return HttpResponse("django %d %s %s %s" % (os.getpid(), request.method, request.path,
                                                 request.META.get("wsgi.version") and "wsgi"
                                                 or "asgi"))


urlpatterns = [
    re_path(r"^(?:.*/)?echo$", echo),
    re_path(r"^(?:.*/)?headers$", headers),
    re_path(r"", home),
]

application = get_wsgi_application()
asgi_app = get_asgi_application()
