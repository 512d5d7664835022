"""Answer a server's requests for input: here the demo server's form (elicitation)."""
import libmcpc


def on_elicitation(request):
    # Runs on an mcpc thread and may block: ask the user here.
    print(request.server, "asks:", request.message)
    if request.kind == libmcpc.InputKind.FORM:
        return libmcpc.Elicitation.accept({"name": "Ada"})  # checked against request.schema
    return libmcpc.Elicitation.decline()


with libmcpc.Client.stdio(["python3", "demo/server.py", "--era", "modern"], timeout=10,
                          on_elicitation=on_elicitation) as client:
    print("wants_input:", client.call("wants_input").text)
