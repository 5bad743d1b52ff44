"""The texts of ``tool_search``'s hints in the query's language
(:func:`~hermes_core.search._query_language.query_language`): Chinese, Japanese, Korean,
Spanish, French and German; English otherwise. A hint written in the user's language says which
of their words were not understood, so the model can tell them, or search again in the words the
tools use.
"""

from __future__ import annotations

from typing import Final

__all__ = ["hint_text"]

_TEXTS: Final[dict[str, dict[str, str]]] = {
    "zh": {
        "empty": "没有工具匹配 {query}。available_sources 中的来源都已连接，其工具仍可使用："
        "请用服务名加具体的操作和对象重试（例如 'github create issue'，英文关键词通常最准），"
        "再下结论说某项功能不存在。",
        "missing": "未能理解 {words}：没有工具包含这些词。如果它是服务或应用的名称，已连接的来源"
        "都不提供它，现有结果只与你的其他词相符。如果它是参数值（地点、ID、文件名），请去掉它再"
        "搜索，然后把它作为参数传给工具。",
        "missing_unavailable": "未能理解 {words}：没有本地工具包含这些词，且托管应用连接器暂时"
        "无法搜索：如果它是服务或应用的名称，不要断定它不存在。如果它是参数值（地点、ID、文件"
        "名），请去掉它再搜索，然后把它作为参数传给工具。",
        "elsewhere": "这些结果都不包含 {words}，但其他工具包含：请围绕它用更少的词再搜索（服务或"
        "对象加一个操作）。",
    },
    "ja": {
        "empty": "{query} に一致するツールはありません。available_sources のソースは接続済みで、"
        "そのツールは使えます。機能がないと判断する前に、サービス名と具体的な操作・対象で再検索"
        "してください（例: 'github create issue'。英語のキーワードが最も確実です）。",
        "missing": "{words} を理解できませんでした: これを含むツールはありません。サービスや"
        "アプリの名前なら、接続済みのソースはどれも提供しておらず、結果はほかの語にだけ一致して"
        "います。引数の値（場所、ID、ファイル名）なら、それを除いて検索し、ツールに引数として"
        "渡してください。",
        "missing_unavailable": "{words} を理解できませんでした: これを含むローカルのツールはなく、"
        "ホストされたアプリのコネクタは今は検索できませんでした。サービスやアプリの名前でも、"
        "ないと判断しないでください。引数の値（場所、ID、ファイル名）なら、それを除いて検索し、"
        "ツールに引数として渡してください。",
        "elsewhere": "これらの結果には {words} が含まれませんが、ほかのツールには含まれます: "
        "その語を中心に、より少ない語（サービスか対象と操作ひとつ）で再検索してください。",
    },
    "ko": {
        "empty": "{query}와(과) 일치하는 도구가 없습니다. available_sources의 소스는 연결되어 "
        "있고 그 도구는 계속 사용할 수 있습니다: 기능이 없다고 판단하기 전에 서비스 이름과 "
        "구체적인 동작과 대상으로 다시 검색하세요(예: 'github create issue', 영어 키워드가 가장 "
        "정확합니다).",
        "missing": "{words}을(를) 이해하지 못했습니다: 이 단어를 포함한 도구가 없습니다. 서비스나 "
        "앱 이름이라면 연결된 소스 중 어느 것도 제공하지 않으며, 결과는 다른 단어와만 일치합니다. "
        "인수 값(장소, ID, 파일 이름)이라면 빼고 검색한 뒤 도구에 인수로 전달하세요.",
        "missing_unavailable": "{words}을(를) 이해하지 못했습니다: 이 단어를 포함한 로컬 도구가 "
        "없고, 호스팅된 앱 커넥터는 지금 검색할 수 없었습니다: 서비스나 앱 이름이라도 없다고 "
        "판단하지 마세요. 인수 값(장소, ID, 파일 이름)이라면 빼고 검색한 뒤 도구에 인수로 "
        "전달하세요.",
        "elsewhere": "이 결과들에는 {words}이(가) 없지만 다른 도구에는 있습니다: 그 단어를 "
        "중심으로 더 적은 단어(서비스나 대상과 동작 하나)로 다시 검색하세요.",
    },
    "es": {
        "empty": "Ninguna herramienta coincide con {query}. Las fuentes de available_sources "
        "están conectadas y sus herramientas siguen disponibles: repite la búsqueda con el nombre "
        "del servicio y una acción y un objeto concretos (p. ej. 'github create issue'; las "
        "palabras clave en inglés son las más fiables) antes de concluir que falta una función.",
        "missing": "No se entendió {words}: ninguna herramienta contiene esas palabras. Si nombran "
        "un servicio o una aplicación, ninguna de las fuentes conectadas lo ofrece y los "
        "resultados solo coinciden con tus otras palabras. Si es el valor de un argumento (un "
        "lugar, un id, un nombre de archivo), busca sin él y pásalo a la herramienta.",
        "missing_unavailable": "No se entendió {words}: ninguna herramienta local contiene esas "
        "palabras y los conectores de aplicaciones alojadas no se pudieron consultar ahora: si "
        "nombran un servicio o una aplicación, no concluyas que falta. Si es el valor de un "
        "argumento (un lugar, un id, un nombre de archivo), busca sin él y pásalo a la "
        "herramienta.",
        "elsewhere": "Ninguno de estos resultados contiene {words}, pero otras herramientas sí: "
        "busca de nuevo con menos palabras en torno a ella (el servicio o el objeto y una "
        "acción).",
    },
    "fr": {
        "empty": "Aucun outil ne correspond à {query}. Les sources de available_sources sont "
        "connectées et leurs outils restent disponibles : relancez la recherche avec le nom du "
        "service, une action et un objet précis (par ex. 'github create issue' ; les mots-clés "
        "en anglais sont les plus fiables) avant de conclure qu'une fonction manque.",
        "missing": "{words} n'a pas été compris : aucun outil ne contient ces mots. S'ils nomment "
        "un service ou une application, aucune des sources connectées ne le fournit et les "
        "résultats ne partagent que vos autres mots. Si c'est la valeur d'un argument (un lieu, "
        "un identifiant, un nom de fichier), cherchez sans elle et passez-la à l'outil.",
        "missing_unavailable": "{words} n'a pas été compris : aucun outil local ne contient ces "
        "mots, et les connecteurs d'applications hébergées n'ont pas pu être consultés pour "
        "l'instant : s'ils nomment un service ou une application, ne concluez pas qu'il manque. "
        "Si c'est la valeur d'un argument (un lieu, un identifiant, un nom de fichier), cherchez "
        "sans elle et passez-la à l'outil.",
        "elsewhere": "Aucun de ces résultats ne contient {words}, mais d'autres outils oui : "
        "cherchez de nouveau avec moins de mots autour (le service ou l'objet et une action).",
    },
    "de": {
        "empty": "Kein Werkzeug passt zu {query}. Die Quellen in available_sources sind verbunden "
        "und ihre Werkzeuge weiter verfügbar: Suchen Sie erneut mit dem Namen des Dienstes und "
        "einer konkreten Aktion und einem Objekt (z. B. 'github create issue'; englische "
        "Stichwörter sind am zuverlässigsten), bevor Sie schließen, dass eine Funktion fehlt.",
        "missing": "Nicht verstanden: {words}. Kein Werkzeug enthält diese Wörter. Benennen sie "
        "einen Dienst oder eine App, so bietet keine der verbundenen Quellen ihn an, und die "
        "Treffer teilen nur Ihre anderen Wörter. Ist es ein Argumentwert (ein Ort, eine ID, ein "
        "Dateiname), suchen Sie ohne ihn und übergeben Sie ihn dem Werkzeug.",
        "missing_unavailable": "Nicht verstanden: {words}. Kein lokales Werkzeug enthält diese "
        "Wörter, und die gehosteten App-Konnektoren konnten gerade nicht durchsucht werden: "
        "Benennen sie einen Dienst oder eine App, schließen Sie nicht, dass er fehlt. Ist es ein "
        "Argumentwert (ein Ort, eine ID, ein Dateiname), suchen Sie ohne ihn und übergeben Sie "
        "ihn dem Werkzeug.",
        "elsewhere": "Keiner dieser Treffer enthält {words}, andere Werkzeuge aber schon: Suchen "
        "Sie erneut mit weniger Wörtern darum herum (dem Dienst oder Objekt und einer Aktion).",
    },
}


def hint_text(language: str, key: str, **fields: str) -> str | None:
    """The hint ``key`` (``empty``, ``missing``, ``missing_unavailable``, ``elsewhere``) in
    ``language`` with ``fields`` filled in; ``None`` for English (the caller's own text)."""
    texts = _TEXTS.get(language)
    return None if texts is None else texts[key].format(**fields)
