"""A Django application in one file for the python bridge's tests
(test_python_bridge.py), under the prefix /d: echo (GET, a form POST), and
a FileResponse, which Django's WSGI handler hands to wsgi.file_wrapper.
MARKS (an environment variable) is where the file it serves lies. Also
test_apps.py's, as WSGI (`application`) and ASGI (`asgi_app`), with its
echo under any one-word prefix."""
import hashlib
import os

from django.conf import settings

MARKS = os.environ.get("MARKS", "/tmp")

settings.configure(
    DEBUG=False,
    SECRET_KEY="bridge-test-only",
    ALLOWED_HOSTS=["*"],
    ROOT_URLCONF=__name__,
    MIDDLEWARE=[],
    INSTALLED_APPS=[],
    USE_TZ=True,
)

from django.core.asgi import get_asgi_application  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.http import FileResponse, JsonResponse  # noqa: E402
from django.urls import path, re_path  # noqa: E402
from django.views.decorators.csrf import csrf_exempt  # noqa: E402


@csrf_exempt
def echo(request):
    body = request.body
    return JsonResponse({
        "method": request.method,
        "path": request.path,
        "get": request.GET.dict(),
        "post": request.POST.dict(),
        "host": request.get_host(),
        "agent": request.META.get("HTTP_USER_AGENT"),
        "length": len(body),
        "sha256": hashlib.sha256(body).hexdigest(),
        "interface": "wsgi" if "wsgi.version" in request.META else "asgi",
    })


def file(request):
    return FileResponse(open(os.path.join(MARKS, "file.bin"), "rb"),
                        content_type="application/octet-stream")


urlpatterns = [
    path("d/echo", echo),
    path("d/file", file),
    re_path(r"^[a-z]+/echo$", echo),
]

application = get_wsgi_application()
asgi_app = get_asgi_application()
