"""A Django application in one file for the python bridge's tests
(test_python_bridge.py), under the prefix /d: echo (GET, a form POST), and
a FileResponse, which Django's WSGI handler hands to wsgi.file_wrapper.
MARKS (an environment variable) is where the file it serves lies."""
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

from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.http import FileResponse, JsonResponse  # noqa: E402
from django.urls import path  # noqa: E402
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
    })


def file(request):
    return FileResponse(open(os.path.join(MARKS, "file.bin"), "rb"),
                        content_type="application/octet-stream")


urlpatterns = [
    path("d/echo", echo),
    path("d/file", file),
]

application = get_wsgi_application()
