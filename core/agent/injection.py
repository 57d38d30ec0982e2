"""Instructions planted in data (A6): sentences of a source or tool result that address the assistant reading
them are removed before the model or the offline responder sees the text, and so before the gate may use them as
support. English, Spanish and Portuguese, over folded text: *directives* count anywhere (the reader's own output,
"your answer", "a tu respuesta"; overriding earlier instructions; role changes; notes to the AI; chat markers);
*commands* open a clause and set the reader a job of its own (write a poem, translate the following, tell the
user..., scramble the letters); *requests* ("What is...?", "Can you show me...", "Explain...") count when they
share (almost) no word with the rest of the text and are not the customer's errand with the business ("Describe
the problem in the contact form", "Why choose us?"); a Q&A pair's own question never does. Ordinary business text
("Llama al 910 555 123", "Visita nuestra tienda", "Escríbenos a info@x.es") matches none of them.
"""
from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from core.base.language import content_words, fold, stopwords
from core.base.text import sentence_spans

# a sentence of its own, capital first and terminator last, so every sentence splitter cuts before and after it
REMOVED = "Instruction-like text removed."


def _alt(words: str) -> str:
    """'a b|c d' -> a regex alternation of the words (spaces kept), longest first."""
    return "(?:" + "|".join(sorted(words.split("|"), key=len, reverse=True)) + ")"


OUT_EN = r"(?:answers?|responses?|repl(?:y|ies)|outputs?|completions?|next message)"
OUT_ES = r"(?:respuestas?|contestacion(?:es)?)"
OUT_PT = r"(?:respostas?)"
LANGUAGES = _alt("english|spanish|french|german|italian|portuguese|russian|chinese|mandarin|japanese|korean|arabic|"
                 "hindi|dutch|latin|greek|turkish|polish|swedish|ingles|espanol|castellano|frances|aleman|italiano|"
                 "portugues|ruso|russo|chino|chines|japones|coreano|arabe|holandes|griego|grego|turco|polaco|sueco|"
                 "catalan|euskera|gallego|alemao|mandarim|klingon|pirate")
# verbs that shape the reader's output ("modify your answer", "termina tu respuesta", "inclua na sua resposta")
SHAPE = _alt(r"modif\w*|change|cambi[ae]|alter[ae]?|rewrite|reescrib[ae]|reescreva|rephrase|format\w*|begin|start|"
             r"empie[cz][ae]|comien[cz][ae]|comece|inici[ae]|end|finish|finali[cz]\w*|termin[ae]|acab[ae]|conclude|"
             r"sign|firm[ae]|assine|augment|aument[ae]|enhance|enrich|enriqu\w*|improve|mejor[ae]|melhore|aprimore|"
             r"expand|ampli[ae]|extend|supplement|complement[ae]?|translate|tradu[cz]\w*|provide|proporcion[ae]|"
             r"forneca|give|da|de|dale|dele|deliver|present[ae]?|apresente|render|make|keep|structure|estructur[ae]|"
             r"estruture|frame|tailor|adapt[ae]?|rearrange|reorden[ae]|reorganize|scramble|jumble|desorden[ae]|"
             r"mezcl[ae]|embaralhe|misture|prefix|append|prepend|include|incluy[ae]|inclua|add|anad[ae]|agreg[au]e?|"
             r"adicione|acrescente|insert[ae]?|insira|integrate|integra|integre|incorporate|incorpora|incorpore|"
             r"mention|mencion[ae]|write|escrib[ae]|escreva|use|usa|utiliz[ae]|utilice|replace|reemplaz[ae]|reemplace|"
             r"sustituy[ae]|substitua|remove|remova|elimin[ae]|quita|quite|retire|combin[ae]|group|agrup[ae]|introduce|"
             r"introduzca|introduza|embed|put|place|pon|ponga|coloque|ponha|mude|faca")
USERS = r"(?:users?|customers?|visitors?|clients?|readers?|humans?|requesters?|people)"
USERS_ES = USERS_PT = (r"(?:usuari[oa]s?|utilizador(?:es)?|client[ea]s?|visitantes?|lector(?:a|es|as)?|"
                       r"leitor(?:a|es|as)?|interlocutor(?:a|es|as)?)")
AI = _alt("ai|a.i.|assistant|chatbot|bot|language model|llm|gpt|chatgpt|claude|gemini|copilot|asistente|assistente|"
          "modelo de lenguaje|modelo de linguagem|inteligencia artificial")
# what a text-coding job works on, and what it turns it into
UNITS = _alt(r"letters?|vowels?|consonants?|characters?|words?|letras?|vocal(?:es)?|vogal|vogais|consonantes?|"
             r"caracter(?:es)?|palabras?|palavras?|keywords?")
CODES = _alt(r"numbers|digits|symbols|emojis?|numerals|asterisks|anagrams|their position|its position|position number|"
             r"numeros|digitos|simbolos|anagramas|su posicion|sua posicao|keyboard symbols")
SCRAMBLE = _alt("scramble|jumble|shuffle|rearrange|reverse|misspell|anagram|desordena|desordene|mezcla|mezcle|baraja|"
                "baraje|invierte|invierta|embaralhe|misture|inverta|reordena|reordene")
CIPHER = _alt("base64|base 64|rot13|rot-13|caesar cipher|morse code|pig latin|leetspeak|leet speak|hexadecimal|"
              "binary code|cifrado cesar|codigo morse|cifra de cesar|homophonic substitution|alphanumeric substitution|"
              "typos|misspellings|spelling mistakes|errores ortograficos|faltas de ortografia|erros ortograficos|"
              "erros de digitacao|anagrams|anagramas")
CREATIVE = _alt(r"poems?|poemas?|poesia|story|stories|historia|cuento|conto|relato|essay|ensayo|ensaio|speech|discurso|"
                r"song|cancion|cancao|musica|haiku|limerick|jokes?|chistes?|piadas?|blog post|tweet|tuit|slogan|"
                r"eslogan|paragraph|parrafo|paragrafo|introduction|introduccion|introducao|conclusion|conclusao|recipe|"
                r"receta|receita|riddle|adivinanza|charada|dialogue|dialogo|novel|novela|romance|chapter|lyrics|sonnet|"
                r"soneto|rap|ode|oda|motto|lema|tagline|headline|titular|manchete|caption|fairy tale|fable|fabula|"
                r"biography|biografia|letter|carta|summary|resumen|resumo|articulo|artigo")
TECHNICAL = _alt(r"script|guion|roteiro|function|funcion|funcao|program|programa|code|codigo|snippet|query|consulta|"
                 r"class|regex|algorithm|algoritmo|example|ejemplo|exemplo|list|lista|report|informe|relatorio|plan|"
                 r"outline|esquema|analysis|analisis|analise|explanation|explicacion|explicacao|definition|definicion|"
                 r"definicao|translation|traduccion|traducao|equivalente?|overview")
MAKE = _alt(r"write|compose|draft|create|generate|produce|develop|provide|give|craft|come up with|tell|invent|prepare|"
            r"output|print|sing|recite|escrib[ae]|escribeme|redact[ae]|compon|componga|crea|cree|gener[ae]|elabor[ae]|"
            r"desarroll[ae]|proporcion[ae]|dame|deme|hazme|hagame|invent[ae]|cuentame|cuenteme|prepara|escrev[ae]|"
            r"redija|componha|crie|gere|desenvolva|forneca|me de|me conte|conte-me|faca")
ASK = _alt(r"explain|describe|summari[sz]e|define|outline|break down|elaborate on|discuss|analy[sz]e|contrast|evaluate|"
           r"teach me|tell me|show me|give me|calculate|compute|solve|predict|estimate|brainstorm|list|explic[ae]|"
           r"expliqu[ae]|explicame|expliqueme|me explique|explica-me|describ[ae]|describeme|descrev[ae]|resum[ae]|"
           r"resumeme|defin[ae]|esbo[cz][ae]|desglos[ae]|detall[ae]|detalhe|anali[cz][ae]|analise|compara|evalu[ae]|"
           r"avalie|ensename|enseneme|me ensine|ensina-me|dime|digame|me diga|diga-me|cuentame|cuenteme|me conte|"
           r"conte-me|muestrame|muestreme|me mostre|mostra-me|dame|deme|me de|calcul[ae]|resuelv[ae]|resolva|predice|"
           r"preveja|estim[ae]|hablame de|hablame sobre|fale sobre|enumer[ae]|liste|classify|clasific[ae]|classifique|"
           r"categori[sz]e|categoriza")
TELL = _alt("tell|ask|inform|convince|persuade|instruct|urge|warn")
TELL_ES = _alt("di|dile|diles|diga|digale|diganle|decid|cuentale|informa|informale|informe|informele|pide|pidele|pida|"
               "pidale|pregunta|preguntale|pregunte|convence|convenza|persuade|persuada|recomienda|recomiendale|"
               "recomiende|sugiere|sugierele|sugiera|avisa|avise|recuerda|recuerdale|recuerde|insta|inste")
TELL_PT = _alt("diga|diz|fala|fale|conte|informe|informa|peca|pede|pergunte|convenca|persuada|recomende|sugira|lembre|"
               "avise|incentive")
LEAD = (r"(?:^[\W_]*|[:;]\s*[\W_]*)(?:(?:please|kindly|also|now|then|and|just|finally|additionally|next|lastly|"
        r"instead|always|first|por favor|tambien|ademas|ahora|luego|despues|y|finalmente|siempre|solo|primero|"
        r"tambem|agora|depois|e|sempre|apenas|primeiro)[,]?\s+){0,2}")
_WH = re.compile(r"^[\W_]*(?:(?:and|also|now|so|y|e|entonces|agora|then)[,]?\s+)?(?:what|what's|whats|who|whom|"
                 r"whose|which|when|where|why|how|que|cual|cuales|quien|quienes|como|cuando|donde|adonde|por que|"
                 r"cuanto|cuanta|cuantos|cuantas|para que|o que|qual|quais|quem|quando|onde|porque|quanto|quanta|"
                 r"quantos|quantas|is it true|es cierto|e verdade)\b")
CAN_YOU = (r"\b(?:can|could|would|will) (?:you|u) (?:please )?(?:show|tell|give|write|explain|help|provide|send|list|"
           r"describe|teach|translate|summari[sz]e|create|generate|make|draw|recommend|suggest|find|compose|draft|"
           r"calculate|solve)\b.*\?\W*$|\b(?:(?:me )?(?:puedes|podrias|podeis|sabes)|me (?:puede|podria)|"
           r"(?:puede|podria) usted|(?:voce|tu) (?:pode|poderia|podes|consegue)|(?:pode|poderia|podes|consegue)"
           r"(?:-me| me)) (?:me )?(?:mostrar|decir|dar|escribir|explicar|ayudar|proporcionar|describir|ensenar|"
           r"traducir|resumir|crear|generar|hacer|recomendar|sugerir|calcular|resolver|dizer|escrever|ajudar|"
           r"fornecer|descrever|ensinar|traduzir|criar|gerar|fazer)(?:me|-me)?\b(?!nos).*\?\W*$")



def _either(verb: str, qualifier: str, noun: str, after: str) -> str:
    """The verb, then the qualifier before the noun ('all previous rules') or after it ('las reglas anteriores')."""
    return (rf"\b(?:{verb})\b.{{0,30}}(?:\b(?:{qualifier})\b.{{0,20}}\b(?:{noun})\b|\b(?:{noun})\b.{{0,20}}"
            rf"\b(?:{after})\b)")


_NOT_MAIL = (r"(?! (?:to|from|a|al|ao|de|del|do) (?:us|our|nos|nosotros|nuestr\w+|nosso\w*|this|este|esta|el|la|o|a) ?"
             r"(?:e-?mail|correo|message|mensaje|mensagem|survey|encuesta|pesquisa|letter|carta)?)")
DIRECTIVES = [
    # the reader's own output: "your answer", "tu respuesta", "na tua resposta", "in every response"
    rf"(?<!for )(?<!appreciate )(?<!value )(?<!await )(?<!receive )(?<!received )(?<!review )\byour (?:own |next |"
    rf"final )?{OUT_EN}\b(?! (?:to|from) (?:us|our|this|the)\b)|\bthe (?:answer|response|reply|output) you "
    rf"(?:give|provide|write|produce)\b|\b(?:in|into|to) (?:each|every|all|any) (?:of your )?{OUT_EN}\b",
    rf"(?<!por )(?<!mos )(?<!recibir )(?<!recibido )\b(?:tu|tus|vuestra|vuestras) (?:propias? )?{OUT_ES}\b",
    rf"(?<!pela )(?<!por )(?<!mos )(?<!receber )\b(?:tua|tuas|vossa|vossas) (?:propria )?{OUT_PT}\b",
    rf"\b(?:en|a) (?:cada|todas las) (?:una de (?:tus|sus) )?{OUT_ES}\b|\b(?:em|a) (?:cada|todas as) {OUT_PT}\b",
    rf"{LEAD}{SHAPE}\b.{{0,40}}\b(?:la|las|a|as|the) (?:{OUT_ES}|{OUT_PT}|answer|response|reply|output)\b",
    # "add at the end: ...", "inclua no final": the end of what the reader writes
    rf"{LEAD}{SHAPE}\b.{{0,40}}\b(?:at the (?:end|beginning|start|top|bottom)|al (?:final|principio|inicio|comienzo)|"
    rf"(?:no|ao) (?:final|fim|inicio|comeco))\b(?! (?:of|de|del|do|da)\b)",
    # a new task or role for the reader: "tu tarea ahora es", "sua nova função é", "your only job is"
    r"\b(?:your|tu|su|sua|tua) (?:(?:new|nueva|nuevo|nova|novo|only|unica|unico|real|verdadera|verdadeira) (?:task|"
    r"job|role|mission|goal|objective|purpose|tarea|funcion|mision|objetivo|papel|rol|tarefa|funcao|missao|trabajo|"
    r"trabalho) (?:now |ahora |agora )?|(?:task|job|role|mission|tarea|funcion|mision|papel|rol|tarefa|funcao|"
    r"missao) (?:now|ahora|agora) )(?:is|es|e|sera|will be)\b",
    r"\b(?:respond|answer|reply|write|speak|talk|act|behave|responde|contesta|habla|escribe|actua|responda|conteste|"
    r"hable|escriba|actue|fale|escreva|aja|atue) (?:como si|as if|as though|como se|like) (?:you were|you are|you're|"
    r"fueras|fuera|fueses|eres|fosse|fosses|voce fosse|tu fosses)\b",
    r"\b(?:reveal|print|show|output|repeat|display|share|list|tell me|revela|revele|muestra|muestre|repite|repita|"
    r"imprime|imprima|enumera|enumere|dime|mostre|mostra|liste|diga-me|me diga) (?:me )?(?:all |todas |todos )?"
    r"(?:(?:your|tu|tus|su|sus|sua|suas|tua|tuas|the (?:system|initial|original|hidden)|el|la|las|los|o|a|os|as) )?"
    r"(?:system prompt|prompt|instructions|initial instructions|rules|configuration|guidelines|instrucciones|"
    r"reglas|configuracion|configuracion interna|directrices|instrucoes|regras|configuracao|diretrizes)\b"
    r"(?<!the prompt)(?<!the rules)(?<!the instructions)(?<!el prompt)(?<!o prompt)",
    rf"{LEAD}{SHAPE}\b.{{0,60}}\b(?:after|before|between|at the end of|despues de|tras|antes de|al final de|depois de|"
    r"apos|no final de) (?:every|each|cada) (?:sentence|paragraph|line|frase|oracion|parrafo|linea|paragrafo|linha)\b",
    # the output coded: "in your message" with letters / emojis / base64
    rf"^(?=.*\b(?:your|tu|tua) (?:message|mensaje|mensagem)\b)(?=.*\b(?:{UNITS}|{CIPHER}|{SCRAMBLE}))",
    rf"\b(?:before|after|instead of|when|while) (?:answering|responding|replying){_NOT_MAIL}",
    rf"\b(?:antes de|despues de|en (?:lugar|vez) de|al|depois de|em vez de|ao) (?:responder|contestar){_NOT_MAIL}",
    rf"\bcuando (?:respondas|contestes)\b{_NOT_MAIL}",
    r"\b(?:answer|respond to|reply to|responde a?|contesta a?|responda a?) (?:the following|this|these|esta|estas|"
    r"la siguiente|las siguientes|a seguinte|as seguintes) (?:question|pregunta|pergunta)s?\b",
    # overriding what the reader was told: "ignore all previous instructions", "las instrucciones anteriores"
    _either(r"ignore|disregard|forget|set aside|put aside|abandon", r"previous|prior|above|earlier|preceding|original|"
            r"initial|system|all|any|your|my|these|those|other", r"instructions?|rules?|prompts?|directions?|"
            r"guidelines?|directives?|context|constraints?|restrictions?|polic(?:y|ies)|programming|commands?|text|content",
            r"above|before|previously|given|so far|earlier|you (?:were given|received|have been given)"),
    r"\b(?:override|bypass|circumvent)\b.{0,20}\b(?:previous|prior|above|earlier|original|initial|system|your|my)\b"
    r".{0,20}\b(?:instructions?|rules?|prompts?|guidelines?|directives?|programming|restrictions?|safety|filters?)\b",
    r"\b(?:ignore|disregard|forget) (?:everything|all|anything|whatever|what) (?:(?:that )?(?:was|is|you (?:were|have "
    r"been|'ve been)|i) (?:said|told|written|given|taught|instructed)|above|before|previously|so far|prior|earlier|"
    r"else)\b|\b(?:ignore|disregard) the (?:above|previous|preceding)\b",
    _either(r"ignora|ignore|ignorad|ignorem|olvida|olvide|olvidad|omite|omita|descarta|descarte|desobedece|"
            r"desconsidera|desconsidere|esqueca|esquece|despreza|despreze|no hagas caso (?:a|de)|no haga caso (?:a|de)|"
            r"nao siga|no sigas|nao obedeca|no obedezcas|deja de lado|deje de lado|pasa por alto|pase por alto|"
            r"haz caso omiso de|haga caso omiso de|saltate|saltese|deixe de lado|deixa de lado|passe por cima de|"
            r"nao leve em conta|no tengas en cuenta|no tenga en cuenta", r"anteriores|previas|previos|de arriba|"
            r"del sistema|do sistema|acima|todas las|todos los|todas as|todos os|tus|sus|suas|tuas|mis|minhas",
            r"instrucciones|instrucoes|reglas|regras|normas|indicaciones|ordenes|directrices|diretrizes|pautas|"
            r"restricciones|restricoes|politicas|orientacoes|comandos|prompt|texto|contenido|conteudo|mensaje|mensagem",
            r"anteriores|previas|previos|de arriba|del sistema|do sistema|acima|recibidas|recebidas|que (?:te|le|lhe) "
            r"(?:dieron|han dado|deram)"),
    r"\b(?:ignora|ignore|olvida|olvide|esqueca|esquece|desconsidera|desconsidere) (?:todo|tudo) (?:lo anterior|lo que|"
    r"o que|acima|antes|o anterior)\b",
    # role changes and notes to the AI
    r"\byou(?: are|'re) no longer\b|\byou(?: are|'re) now (?:an? |the |my )?(?:ai|assistant|chatbot|bot|model|"
    r"character|persona|called|named|dan|free|unrestricted|jailbroken|evil|\w+gpt)\b|\bfrom now on,? (?:you are|"
    r"you're|you will (?:be|act|respond|answer|reply|only|always|never|speak|talk|pretend)|you (?:must|should|shall)|"
    r"respond|answer|reply|act as|always (?:respond|answer|reply|say)|only (?:respond|answer|reply))\b",
    r"\b(?:pretend|roleplay|role-play) (?:to be|you are|you're|as|that you)\b|\bact as (?:if|though) you\b|"
    r"\bas an? (?:ai|a\.i\.|language model|llm|chatbot)\b",
    r"\b(?:a partir de ahora|desde ahora|de ahora en adelante),? (?:tu )?(?:eres|seras|actuas|actuaras|responderas|"
    r"responde|contesta|hablaras|actua|debes responder)\b|\bahora eres (?:una? )?(?:asistente|ia|bot|chatbot|modelo|"
    r"personaje)\b|\b(?:finge|finja|fingid|pretende) (?:que eres|que es|ser)\b",
    r"\b(?:a partir de agora|de agora em diante|agora),? (?:voce|tu) (?:e|es|sera|vai ser|deve responder)\b|"
    r"\b(?:a partir de agora|de agora em diante),? (?:responda|aja|fale|seja)\b|\bfinja (?:que|ser)\b|"
    r"\bfaca de conta que\b",
    rf"\b(?:you are|you're|eres|seras|voce e|tu es) (?:an? |una? |uma? )?{AI}\b",
    rf"\b(?:if you are|if you're|si eres|se voce e|se voce for|se es|se tu es) (?:an? |una? |uma? )?(?:{AI}|ia|"
    rf"model|modelo|agent|agente)\b",
    rf"\b(?:dear|hey|hi|hello|note to|notice to|message to|instructions? (?:for|to)|querido|querida|nota para|"
    rf"nota al|nota ao|mensaje para|mensaje al|mensagem para|mensagem ao|instrucciones para|instrucoes para|"
    rf"prezado|atencion,|atencao,|attention,) (?:the |el |la |o |a |any |cualquier |qualquer )?(?:{AI}|ia|model|"
    rf"modelo)\b",
    rf"\b{AI}s? (?:reading|processing|summari[sz]ing|answering|que (?:lea|lee|procese|responda)|lendo|processando)\b",
    r"\b(?:system|initial|original|hidden|secret) (?:prompt|instructions|message)\b|\byour (?:system )?prompt\b|"
    r"\b(?:jailbreak|jailbroken|god|dan|unrestricted) mode\b|\bnew (?:instructions|task)\s*:|"
    r"\b(?:prompt|mensaje|mensagem|instrucciones|instrucoes) (?:del|do) sistema\b|\b(?:nuevas|novas) "
    r"(?:instrucciones|instrucoes)\s*:|\b(?:nueva|nova) tarea\s*:|\bnova tarefa\s*:",
    r"<\|[a-z_]+\|>|\[/?inst\]|<</?sys>>|^\W*###\s*(?:system|instructions?|assistant|response|sistema|instruccion|"
    r"instrucao)\b|^\W*(?:assistant|asistente|assistente)\s*:",
    r"\b(?:begin|end|start) (?:of )?(?:new |system |admin |developer )?(?:instructions|prompt|system message)\b",
]
# (usted / você) "su respuesta", "sua resposta" is also "his answer": it counts with an imperative that shapes it
FORMAL = [rf"\b(?:su|sus|sua|suas) (?:{OUT_ES}|{OUT_PT})\b"]
COMMANDS = [
    # tell the user..., dile al cliente..., diga ao usuário...
    rf"{LEAD}{TELL} (?:the |all |every |any )?{USERS}\b",
    rf"{LEAD}{TELL_ES} (?:a |al |a los |a las |a la |a cada |a todos los |a todas las |a tus |a sus |le |les )?"
    rf"{USERS_ES}\b|{LEAD}(?:dile|digale|diles|digales) que\b|{LEAD}(?:tell|dile|digale|diles|di|diga) (?:a |al )?"
    r"(?:whoever|anyone who|everyone who|anybody who|quien|quienes|todo el que|cualquiera que|quem|qualquer pessoa "
    r"que|todos que|todo aquele que)\b",
    rf"{LEAD}{TELL_PT} (?:ao |aos |a |as |o |os |para o |para os |para a |para as |a cada )?{USERS_PT}\b",
    # write a poem / a story / a letter to a principal
    rf"{LEAD}{MAKE} (?:me |us |nos |para mim )?(?:an?|the|some|one|two|three|un|una|unos|unas|el|la|um|uma|o|dos|"
    rf"tres|\d+)?(?: [\w-]+){{0,3}}? {CREATIVE}\b(?! (?:to|a|para) (?:us|me|nos|nosotros|our|nuestr|nosso))",
    rf"{LEAD}(?:pretend|finge|finja|fingid|haz como si|haga como si|faz de conta|faca de conta)\b",
    # coding the text: letters with numbers, scrambled words, base64, typos
    rf"\b{UNITS}\b.{{0,40}}\b(?:with|by|into|for|to|as|por|con|en|em|com|pel[oa]s?)\b.{{0,25}}\b{CODES}",
    rf"{LEAD}(?:\w+ ){{0,2}}?{SCRAMBLE}\w*\b.{{0,40}}\b{UNITS}\b|{LEAD}(?:group|agrupa|agrupe)\b.{{0,20}}\b{UNITS}\b",
    rf"\b{CIPHER}\b|\b{CODES}\b.{{0,15}}\b(?:instead of|en lugar de|en vez de|em vez de|no lugar de|rather than)"
    rf"\b.{{0,15}}\b{UNITS}\b",
    # translate the following..., what is 'X' in English?
    rf"{LEAD}(?:translate|traduce|traduzca|traduza|traduz)\b(?! (?:this|the|esta|la|a) (?:page|site|website|pagina|"
    rf"sitio|web)\b)(?:.{{0,60}}\b(?:into|to|al|a|en|para o|para|em) {LANGUAGES}\b| (?:the following|this|these|esta|"
    r"este|estas|la siguiente|el siguiente|lo siguiente|a seguinte|o seguinte|isto|isso)\b)",
    rf"[\"'“‘«].{{1,60}}[\"'”’»].{{0,20}}\b(?:in|into|en|em|al|para o) {LANGUAGES}\b.*\?\W*$",
    rf"{LEAD}(?:answer|respond|reply|write your (?:answer|reply|response)|responde|contesta|responda|conteste|"
    rf"escreva sua resposta) (?:only |always |exclusively |solo |solamente |siempre |unicamente |exclusivamente |"
    rf"sempre |apenas |somente |so )?(?:in|en|em) {LANGUAGES}\b",
    r"(?:^[\W_]*|[:;]\s*)(?:\w+ ){0,2}?(?:say|print|output|repeat|respond with|reply with|answer with|di|repite|repita|"
    r"imprime|imprima|responde con|responda con|contesta con|responda com|diga|escreva apenas|write only)\b"
    r"(?: only| just| exactly| verbatim| solo| solamente| unicamente| exactamente| apenas| somente| exatamente)?"
    r"(?: the (?:word|phrase|text|sentence|following)| la (?:palabra|frase)| lo siguiente| a (?:palavra|frase)|"
    r" o seguinte)?:?\s*[\"'“‘«]",
]
# a job for the reader that is only one when it has nothing to do with the text around it
REQUESTS = [rf"{LEAD}{ASK}\b", rf"{LEAD}compare\b(?! with| to)", CAN_YOU,
            rf"{LEAD}(?:let's|let us|lets) (?:talk|chat|discuss|play|pretend|imagine)\b|{LEAD}(?:hablemos|charlemos|"
            r"juguemos|imaginemos|vamos conversar|vamos falar|vamos jogar|vamos imaginar)\b",
            rf"{LEAD}(?:find|search for|look up|research|investigate|busca|busque|encuentra|encuentre|investiga|"
            r"investigue|pesquise|encontre)\b",
            rf"{LEAD}(?:mention|say|state|claim|assert|emphasi[sz]e|stress|insist|menciona|mencione|afirma|afirme|"
            r"insiste|insista|destaca|destaque|enfatiza|enfatice|mencione|afirme|destaque|enfatize) (?:that|que)\b",
            rf"{LEAD}(?:promote|advertise|endorse|promociona|promocione|publicita|publicite|promova|divulgue)\b",
            rf"{LEAD}(?:{MAKE}|make|haz|haga|faz) (?:me |us )?(?:an?|the|some|un|una|el|la|um|uma|o)?"
            rf"(?: [\w-]+){{0,3}}? {TECHNICAL}\b"]

_DIRECTIVE = re.compile("|".join(f"(?:{p})" for p in DIRECTIVES))
_FORMAL = re.compile("|".join(f"(?:{p})" for p in FORMAL))
ENSURE = _alt("asegurate|asegurese|procura|procure|recuerda|recuerde|no olvides|no olvide|intenta|intente|haz que|"
              "haga que|certifique-se|certifica-te|garanta|lembre-se|nao esqueca|tente|faca com que|make sure|ensure|"
              "be sure|remember to|don't forget|do not forget")
_SHAPING = re.compile(rf"{LEAD}(?:{SHAPE}|{ENSURE})\b")
_COMMAND = re.compile("|".join(f"(?:{p})" for p in COMMANDS))
_REQUEST = re.compile("|".join(f"(?:{p})" for p in REQUESTS))
_WORD = re.compile(r"[^\W\d_]{3,}")
# the stems of a request's own words: sharing them says nothing about the topic
_TASK = frozenset("expla descr summa defin outli break elabo discu analy compa contr evalu teach tell show give calcu "
                  "compu solve predi estim brain list write compo draft creat gener produ devel provi craft examp "
                  "exemp ejemp simpl term main prima follo work diffe proce way best pleas help make doe like usin use "
                  "used based short brief detai step expli resum detal resue dime cuent muest dame escri crea senci "
                  "princ sigui difer forma maner puede podri pode poder mostr diga".split())
STEM = 5
RELATED_SHARE = 0.25
# the asker or the business in a question ('do you', 'can I', 'vuestro', 'posso'): an FAQ's, not a planted one
_PERSON = re.compile(r"\b(?:i|i'm|i've|me|my|mine|we|us|our|ours|you|your|yours|yo|mi|mis|nos|nosotros|nuestr[oa]s?|tu|"
                     r"tus|te|ti|usted(?:es)?|vosotros|os|vuestr[oa]s?|puedo|tengo|debo|necesito|quiero|podeis|teneis|"
                     r"haceis|aceptais|eu|meu|minha|meus|minhas|noss[oa]s?|voce|voces|seus?|suas?|teu|tua|posso|tenho|"
                     r"preciso|quero)\b")
# a request about these is the customer's errand ('Describe the problem in the contact form'), not a planted job
_US = re.compile(r"\b(?:we|us|our|ours|nosotr[oa]s|nos|nuestr[oa]s?|noss[oa]s?|\w+(?:ar|er|ir)nos)\b|-nos\b")
_ERRAND = re.compile(
    r"\b(?:pedidos?|encomendas?|orders?|formulario|forms?|cuentas?|contas?|accounts?|contact\w*|tiendas?|lojas?|stores?|"
    r"shops?|compras?|purchases?|product[oa]?s?|produtos?|parcels?|packages?|paquetes?|pacotes?|factura|fatura|"
    r"invoices?|recibos?|receipts?|tickets?|soporte|suporte|support|apps?|web|website|sitio|site|paginas?|pages?|"
    r"correo|e-?mail|telefono|telefone|phone|envios?|shipping|delivery|entregas?|devoluc\w+|returns?|refunds?|"
    r"reembolsos?|garantias?|warranty|pagos?|pagamentos?|payments?|precios?|precos?|prices?|clientes?|customers?|"
    r"problem[as]*|issues?|incidencias?|fotos?|photos?|reservas?|bookings?|reservations?|citas?|appointments?|"
    r"tallas?|sizes?|tamanho)\b")


def _stems(text: str) -> Counter:
    """Content-word prefixes (folded, plural -s off, stop words and the words of requests out)."""
    stop = stopwords("es")
    words = (w for w in _WORD.findall(fold(text)) if w not in stop)
    stems = ((w[:-1] if w.endswith("s") and len(w) > 3 else w)[:STEM] for w in words)
    return Counter(stem for stem in stems if stem not in _TASK)


def _unrelated(text: str, rest: Counter, question: bool) -> bool:
    """Whether a request shares (almost) no word with the text around it: none, or under a quarter of its own
    words when it shares just one. A question needs two content words to tell ('What can I say?')."""
    own = _stems(text)
    if not own or not rest or (question and len(content_words(text, "es")) < 2):
        return False
    shared = sum(1 for stem in own if rest[stem] > 0)
    return shared < 2 and shared / len(own) < RELATED_SHARE


def _is_request(folded: str) -> bool:
    return bool(_REQUEST.search(folded) or (folded.rstrip().endswith("?") and _WH.search(folded)))


def instruction(sentence: str, context: str | None = None, entry: bool = False) -> bool:
    """Whether ``sentence`` addresses the assistant reading it. ``context`` is the text around it, for the
    requests that are only instructions when they have nothing to do with it (None: no such test); an ``entry``
    question (heading an FAQ entry) is one only when it does not speak of the asker or the business either."""
    folded = " ".join(fold(sentence).split())
    if _DIRECTIVE.search(folded) or _COMMAND.search(folded) or (_FORMAL.search(folded) and _SHAPING.search(folded)):
        return True
    if context is None or not _is_request(folded) or (entry and _PERSON.search(folded)) or _ERRAND.search(
            folded) or _US.search(folded):  # the customer's business with us is no job for the reader
        return False
    return _unrelated(sentence, _stems(context), question=not _REQUEST.search(folded))


_MARK = re.compile(r"\s*(?:\d{1,3}[.)]|[-*•·]|#{1,6}|(?:q|p|question|pregunta|pergunta)\s*\d*\s*[:.)-])?\s*", re.I)


def _whole_line(text: str, start: int, end: int) -> bool:
    """The sentence is its line (give or take an FAQ number, a bullet or 'Q:' in front)."""
    line_end = text.find("\n", end)
    return bool(_MARK.fullmatch(text[text.rfind("\n", 0, start) + 1:start])) and not text[end:line_end % (
        len(text) + 1)].strip()


def _entries(text: str, pieces: list[tuple[int, int]], qa: bool) -> tuple[set, set]:
    """(exempt, entry) pieces: a Q&A pair's own question (its first line) and the whole-line questions of an FAQ
    list (two or more in one text) are exempt from the topic test; a whole line among the first two of a text
    of several lines heads an entry (the chunker makes any question line and what follows one)."""
    first_line = text.find("\n")
    exempt = {(a, b) for a, b in pieces if qa and (first_line < 0 or b <= first_line)}
    if "\n" not in text.strip():
        return exempt, set()
    lines = [(a, b) for a, b in pieces if _whole_line(text, a, b)]
    questions = [(a, b) for a, b in lines if text[a:b].rstrip().endswith("?")]
    if len(questions) > 1:
        exempt |= set(questions)
    return exempt, {(a, b) for a, b in lines if sum(1 for line in text[:a].split("\n") if line.strip()) < 2}


_CUT = re.compile(r"(?:(?<=[.!?…])[\"'”’»)\]]*|(?<=\|>))\s+(?=[¿¡\"“«(]?[A-ZÁÉÍÓÚÑÇÀÂÊÔÃÕ])")
_COLON = re.compile(r"[:;]\s+(?=[¿¡\"“«(]?[A-ZÁÉÍÓÚÑÇÀÂÊÔÃÕ])")
_QUOTES = re.compile(r"[\"“”«»]")


def _pieces(text: str) -> list[tuple[int, int]]:
    """The text's sentences, cut again where a terminator is followed by a capital (the splitter keeps
    'www.example.com. Next' together), and joined again while a quotation is open ('Add "Great deal!" to...')."""
    cuts = []
    for a, b in sentence_spans(text):
        starts = [a] + [m.end() for m in _CUT.finditer(text, a, b)]
        cuts += [(x, y) for x, y in zip(starts, starts[1:] + [b]) if text[x:y].strip()]
    out: list[tuple[int, int]] = []
    for a, b in cuts:
        previous, gap = (text[out[-1][0]:out[-1][1]].rstrip(), text[out[-1][1]:a]) if out else ("", "")
        wrapped = gap.count("\n") == 1 and previous[-1:] not in ".!?:;" and text[a:a + 1].islower()  # hard-wrapped
        joined = out and (wrapped or "\n" not in gap and (
            len(_QUOTES.findall(previous)) % 2 or (previous[-1:] in "\"”»'" and text[a:a + 1].islower())))
        out[-1:] = [(out[-1][0], b)] if joined else [*out[-1:], (a, b)]
    return [(a, a + len(text[a:b].rstrip())) for a, b in out]


def _judged(text: str, a: int, b: int, exempt: bool, entry: bool) -> tuple[int, int] | None:
    """The part of text[a:b] to remove, if any: the whole sentence, or only what follows its last colon when
    that alone is an instruction ('Tesla declared the following: Who wrote Hamlet?')."""
    def judge(x: int) -> bool:
        context = None if exempt else text[:x] + " " + text[b:]
        return instruction(text[x:b], context, entry=entry)

    tails = [m.end() for m in _COLON.finditer(text, a, b)]
    tail = next((x for x in reversed(tails) if judge(x)), None)
    return (tail, b) if tail is not None else (a, b) if judge(a) else None


def _spans(text: str, qa: bool = False) -> list[tuple[int, int]]:
    """The instruction-like sentences of ``text``, as (start, end)."""
    pieces = _pieces(text)
    exempt, entries = _entries(text, pieces, qa)
    found = (_judged(text, a, b, (a, b) in exempt, (a, b) in entries) for a, b in pieces)
    return [span for span in found if span]


def flagged(text: str, qa: bool = False) -> list[str]:
    """The sentences of ``text`` the guard removes (``qa``: the text is a Q&A pair, its question first)."""
    return [text[a:b] for a, b in _spans(text, qa)]


@lru_cache(maxsize=8192)
def defuse(text: str, qa: bool = False) -> tuple[str, int]:
    """The text with each instruction-like sentence replaced by :data:`REMOVED`, and how many were removed
    (``qa``: a Q&A pair's text, its own question first). Cached: the same chunks come back turn after turn."""
    spans = _spans(text or "", qa)
    if not spans:
        return text, 0
    kept = [text[cursor:a] for cursor, (a, _) in zip([0] + [b for _, b in spans], spans)]
    return ("".join(part + REMOVED for part in kept) + text[spans[-1][1]:]).strip(), len(spans)
